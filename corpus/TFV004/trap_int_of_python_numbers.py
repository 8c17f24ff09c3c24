# Trap (issue 17): a method gets Python lists; `int(n * ratios[i])` is integer arithmetic on Python numbers, not a device sync, and `(n * ratios[i]).long()` raises on them.
import torch


class ChannelPruner:
    def __init__(self, model, layer_sizes):
        self.model = model
        self.layer_sizes = layer_sizes

    def channels_to_keep(self, names, ratio_list):
        sizes = sorted([self.layer_sizes[name] for name in names])
        ratios = sorted(ratio_list)
        total = 0
        for i, n in enumerate(sizes):
            total += int(n * ratios[i])
        return total
