# warden-case: vars-self-repr
# group: BENIGN
# technique: vars(self) in a generic __repr__
# expect-static: allow
# expect-output: OK: Job(id=7, state='done')
class Job:
    def __init__(self, id, state):
        self.id = id
        self.state = state

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


print(f"OK: {Job(7, 'done')!r}")
