# warden-case: j-nltk-corenlp-server
# group: J
# technique: nltk's CoreNLP wrapper starts a Java server and talks HTTP to it
# variant: plain
# expect-static: deny
# expect-rules: IMP101
# expect-jail: contained
from nltk.parse.corenlp import CoreNLPServer

server = CoreNLPServer(port=5758)
server.start()
