# warden-case: typing-typeddict-records
# group: BENIGN
# technique: TypedDict, Optional, Union annotations
# expect-static: allow
# expect-output: OK: valid records 2 of 3
from typing import Dict, List, Optional, TypedDict, Union


class Record(TypedDict):
    id: int
    email: Optional[str]
    score: Union[int, float]


def valid(rec: Record) -> bool:
    return rec["email"] is not None and "@" in rec["email"]


records: List[Record] = [
    {"id": 1, "email": "a@x.org", "score": 3},
    {"id": 2, "email": None, "score": 4.5},
    {"id": 3, "email": "c@y.org", "score": 1},
]
index: Dict[int, Record] = {r["id"]: r for r in records}
good = [r for r in records if valid(r)]
print("ids:", sorted(index))
print(f"OK: valid records {len(good)} of {len(records)}")
