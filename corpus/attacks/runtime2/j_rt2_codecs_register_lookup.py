# warden-case: j-rt2-codecs-register-lookup
# group: J
# technique: a codec search function registered with codecs.register runs os.popen when an unknown encoding is looked up
# variant: other
# expect-static: deny
# expect-rules: IMP101 REX501
# expect-jail: contained
# expect-runtime: PROC801
import codecs
import os


def search(name):
    if name == "wardenx":
        os.popen("id").read()
    return None


codecs.register(search)
"abc".encode("wardenx")
