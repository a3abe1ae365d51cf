# warden-case: unicodedata-normalize
# group: BENIGN
# technique: unicodedata normalisation of user text
# expect-static: allow
# expect-output: OK: normalized ['cafe', 'naive', 'resume']
import unicodedata


def strip_accents(text):
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


words = ["café", "naïve", "résumé"]
print("category of é:", unicodedata.category("é"))
print(f"OK: normalized {[strip_accents(w) for w in words]}")
