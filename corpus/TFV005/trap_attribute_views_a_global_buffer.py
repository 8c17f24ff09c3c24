# Trap: the object's `self.back` was made, in `__init__`, as a view of the module's buffer one
# element behind `front`: the loop reads through it what the step before wrote into `front`.
import torch

TAPE = torch.zeros(12)


class Flood:
    def __init__(self):
        self.back = TAPE[:-1]

    def spread(self):
        front = TAPE[1:]
        for i in range(self.back.size(0)):
            if self.back[i] > 0:
                front[i] = self.back[i] + 1
        return TAPE
