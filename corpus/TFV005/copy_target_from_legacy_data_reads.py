# A target copied where the word is unknown and the copy source is known: the legacy `.data`
# reads and `len(self.vocab)` (one number for every step) stay as written, and `align` is read
# only where `target_data[i] == 0`, so the selected positions are narrowed test by test.
import torch


class CopyTargets:
    def __init__(self, vocab):
        self.vocab = vocab

    def remap(self, target, align):
        target = target.view(-1)
        align = align.view(-1)
        target_data = target.data.clone()
        for i in range(target_data.size(0)):
            if target_data[i] == 0 and align.data[i] != 0:
                target_data[i] = align.data[i] + len(self.vocab)
        self.log(target_data)
        return target_data
