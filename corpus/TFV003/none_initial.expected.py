# The None-initial form: the first piece is taken as is, later ones are concatenated.
import torch


def encode_all(encoder, batches):
    codes = None
    codes_parts = []
    for batch in batches:
        z = encoder(batch)
        codes_parts.append(z)
    codes = codes_parts[0] if len(codes_parts) == 1 else torch.cat(codes_parts, dim=0) if codes_parts else None
    return codes
