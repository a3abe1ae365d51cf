# warden-case: j-requests-get
# group: J
# technique: requests.get
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-connect tcp4:127.0.0.1:5758
import requests

print(requests.get("http://127.0.0.1:5758/", timeout=3).text)
