# warden-case: i-openpyxl-load-workbook-shadow
# group: I
# technique: openpyxl.load_workbook on /etc/shadow
# variant: plain
# expect-static: deny
# expect-rules: FILE701
# expect-jail: canary-unread; no-read /etc/shadow
import openpyxl

book = openpyxl.load_workbook("/etc/shadow")
print(book.sheetnames)
