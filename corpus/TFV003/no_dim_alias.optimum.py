# Hand-written optimum for no_dim_alias.py: the squared rows stacked are just x * x.
import torch as th


def squares(x):
    return x * x
