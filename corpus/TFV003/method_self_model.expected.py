# A method collecting predictions from self.model with torch.concat and a negative dim.
import torch


class Predictor:
    def __init__(self, model):
        self.model = model

    def predict(self, batches):
        preds = torch.empty(0, 10)
        preds_parts = []
        for xb in batches:
            preds_parts.append(self.model(xb).softmax(dim=-1))
        preds = torch.concat([preds, *preds_parts], dim=-2)
        return preds
