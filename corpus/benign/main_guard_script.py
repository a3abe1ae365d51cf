# warden-case: main-guard-script
# group: BENIGN
# technique: script structured with main() and a __name__ guard
# expect-static: allow
# expect-output: OK: main finished with 3 reports
def build_report(name, values):
    return {"name": name, "n": len(values), "mean": sum(values) / len(values)}


def main():
    data = {"a": [1, 2, 3], "b": [10, 20], "c": [5]}
    reports = [build_report(k, v) for k, v in sorted(data.items())]
    for r in reports:
        print(f"{r['name']}: n={r['n']} mean={r['mean']:.2f}")
    return len(reports)


if __name__ == "__main__":
    count = main()
    print(f"OK: main finished with {count} reports")
