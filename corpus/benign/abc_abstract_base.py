# warden-case: abc-abstract-base
# group: BENIGN
# technique: abc.ABC with abstract methods
# expect-static: allow
# expect-output: OK: exporters ['csv', 'json'], abstract blocked True
import json
from abc import ABC, abstractmethod


class Exporter(ABC):
    @abstractmethod
    def render(self, rows):
        ...

    def name(self):
        return self.format_name


class CsvExporter(Exporter):
    format_name = "csv"

    def render(self, rows):
        return "\n".join(",".join(map(str, r)) for r in rows)


class JsonExporter(Exporter):
    format_name = "json"

    def render(self, rows):
        return json.dumps(rows)


try:
    Exporter()
    blocked = False
except TypeError:
    blocked = True
rows = [[1, 2], [3, 4]]
outputs = {e.name(): e.render(rows) for e in (CsvExporter(), JsonExporter())}
print(outputs["csv"])
print(f"OK: exporters {sorted(outputs)}, abstract blocked {blocked}")
