# warden-case: jail-workdir-state-persist
# group: JAIL
# technique: leave state in the work dir for the next run
# variant: plain
# expect-static: allow
# expect-rules: none
# expect-jail: no-persist
from pathlib import Path

marker = Path("warden-state.txt")
count = int(marker.read_text()) + 1 if marker.exists() else 1
marker.write_text(str(count))
print("run count", count)
