# Hand-written optimum for name_clash.py: the two halved chunks concatenated are just x / 2.
import torch


def halves(x):
    return x / 2
