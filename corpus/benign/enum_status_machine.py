# warden-case: enum-status-machine
# group: BENIGN
# technique: Enum-driven state machine
# expect-static: allow
# expect-output: OK: final state DONE after 3 steps
from enum import Enum, auto


class State(Enum):
    NEW = auto()
    RUNNING = auto()
    REVIEW = auto()
    DONE = auto()


TRANSITIONS = {
    State.NEW: State.RUNNING,
    State.RUNNING: State.REVIEW,
    State.REVIEW: State.DONE,
}

state = State.NEW
steps = 0
while state is not State.DONE:
    state = TRANSITIONS[state]
    steps += 1
    print("->", state.name, state.value)
print(f"OK: final state {state.name} after {steps} steps")
