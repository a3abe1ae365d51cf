# warden-case: warnings-filter-capture
# group: BENIGN
# technique: warnings.catch_warnings to record a warning
# expect-static: allow
# expect-output: OK: captured 1 warning: deprecated option
import warnings


def legacy(option):
    if option == "old":
        warnings.warn("deprecated option", DeprecationWarning, stacklevel=2)
    return option.upper()


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    legacy("new")
    legacy("old")
print(f"OK: captured {len(caught)} warning: {caught[0].message}")
