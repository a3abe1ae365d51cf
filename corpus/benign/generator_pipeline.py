# warden-case: generator-pipeline
# group: BENIGN
# technique: generator pipeline over lines
# expect-static: allow
# expect-output: OK: 3 valid readings, mean 21.5
def read_lines():
    yield from ["temp,21.0", "bad line", "temp,22.5", "", "temp,21.0", "hum,40"]


def parse(lines):
    for line in lines:
        parts = line.split(",")
        if len(parts) == 2:
            yield parts[0], parts[1]


def only(kind, pairs):
    for k, v in pairs:
        if k == kind:
            yield float(v)


readings = list(only("temp", parse(read_lines())))
mean = sum(readings) / len(readings)
print(f"OK: {len(readings)} valid readings, mean {mean:.1f}")
