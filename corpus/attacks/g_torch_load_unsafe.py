# warden-case: g-torch-load-unsafe
# group: G
# technique: torch.load with weights_only=False unpickles arbitrary objects
# variant: plain
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
import torch

with open("weights.pt", "wb") as fh:
    fh.write(b"cos\nsystem\n(S'id'\ntR.")
state = torch.load("weights.pt", weights_only=False)
