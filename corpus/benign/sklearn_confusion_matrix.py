# warden-case: sklearn-confusion-matrix
# group: BENIGN
# technique: confusion matrix and precision/recall
# expect-static: allow
# expect-output: OK: confusion [[2, 1], [0, 3]]
from sklearn.metrics import confusion_matrix, precision_score, recall_score

y_true = [0, 0, 0, 1, 1, 1]
y_pred = [0, 1, 0, 1, 1, 1]
cm = confusion_matrix(y_true, y_pred)
print(f"precision {precision_score(y_true, y_pred):.2f} recall {recall_score(y_true, y_pred):.2f}")
print(f"OK: confusion {cm.tolist()}")
