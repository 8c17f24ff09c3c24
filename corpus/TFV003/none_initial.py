# The None-initial form: the first piece is taken as is, later ones are concatenated.
import torch


def encode_all(encoder, batches):
    codes = None
    for batch in batches:
        z = encoder(batch)
        if codes is None:
            codes = z
        else:
            codes = torch.cat([codes, z], dim=0)
    return codes
