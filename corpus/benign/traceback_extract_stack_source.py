# warden-case: traceback-extract-stack-source
# group: BENIGN
# technique: a debug helper lists the call stack with each frame's source line (traceback.extract_stack reads every frame's file through linecache, warden's bootstrap included)
# expect-static: allow
# expect-output: OK: every frame has its source line True
import traceback


def log_call_site():
    stack = traceback.extract_stack()
    for frame in stack[-2:]:
        print(f"{frame.name}: {frame.line}")
    return stack


def load_data():
    return log_call_site()


stack = load_data()
print(f"OK: every frame has its source line {all(frame.line for frame in stack)}")
