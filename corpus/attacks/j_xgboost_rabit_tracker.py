# warden-case: j-xgboost-rabit-tracker
# group: J
# technique: xgboost's RabitTracker opens a listening socket for distributed training
# variant: plain
# expect-static: deny
# expect-rules: REF201
# expect-jail: contained
import xgboost

tracker = xgboost.RabitTracker(host_ip="127.0.0.1", n_workers=1)
tracker.start()
print(tracker.worker_args())
