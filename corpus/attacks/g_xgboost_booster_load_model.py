# warden-case: g-xgboost-booster-load-model
# group: G
# technique: xgboost Booster.load_model parses a model file the program crafted
# variant: plain
# expect-static: deny
# expect-rules: REF202
# expect-jail: contained
import xgboost as xgb

with open("model.json", "w") as fh:
    fh.write('{"learner": {"gradient_booster": {"name": "gbtree"}}}')
booster = xgb.Booster()
booster.load_model("model.json")
print(booster.num_boosted_rounds())
