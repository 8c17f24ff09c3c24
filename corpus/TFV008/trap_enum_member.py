# Trap: in an `Enum` body every name bound becomes a member: new lines that bind the parts
# list would add a member (and bind `ids` twice, which Enum refuses).
import enum

import torch

PARTS = [torch.zeros(2, dtype=torch.long), torch.zeros(3, dtype=torch.long)]


class Ids(enum.Enum):
    ids = torch.cat([torch.full_like(p, i) for i, p in enumerate(PARTS)])


def members():
    return len(Ids), Ids.ids.value
