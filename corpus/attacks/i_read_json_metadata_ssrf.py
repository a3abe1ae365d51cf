# warden-case: i-read-json-metadata-ssrf
# group: I
# technique: pd.read_json against a cloud metadata endpoint (SSRF)
# variant: plain
# expect-static: deny
# expect-rules: FILE703
# expect-jail: layer ns:net
import pandas as pd

creds = pd.read_json("http://169.254.169.254/latest/meta-data/iam/security-credentials/")
print(creds)
