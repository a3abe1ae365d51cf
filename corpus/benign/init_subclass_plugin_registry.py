# warden-case: init-subclass-plugin-registry
# group: BENIGN
# technique: __init_subclass__ registers every exporter subclass
# expect-static: allow
# expect-output: OK: exporters csv, json
class Exporter:
    registry = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        Exporter.registry[cls.fmt] = cls


class CsvExporter(Exporter):
    fmt = "csv"


class JsonExporter(Exporter):
    fmt = "json"


print(f"OK: exporters {', '.join(sorted(Exporter.registry))}")
