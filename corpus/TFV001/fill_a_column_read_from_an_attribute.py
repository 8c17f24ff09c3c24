# A column filled row by row at an index the object holds (`self._stop`): one store of the
# column. The attribute is read where the loop runs; nothing in the method makes it a view of
# `logits` (`topk` gives new values).
import torch


class Decoder:
    def __init__(self, width, stop):
        self.width = width
        self._stop = stop
        self.history = []
        self.scores = torch.zeros(width)

    def step(self, logits, min_steps):
        vocab = logits.size(1)
        if len(self.history) < min_steps:
            for row in range(len(logits)):
                logits[row][self._stop] = -1e9
        best, where = logits.view(-1).topk(self.width)
        self.scores = best
        self.history.append(where // vocab)
        return self.scores
