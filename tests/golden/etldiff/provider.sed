# The process and thread ids of a recording differ on every run (tests/mkscenario records its
# scenario live): in the threads' headings, in JSON and in the table of threads (whose columns
# keep their width) each becomes PID or TID.
s/pid [0-9][0-9]*, tid [0-9][0-9]*/pid PID, tid TID/g
s/"pid":[0-9][0-9]*,"tid":[0-9][0-9]*/"pid":PID,"tid":TID/g
/^T[0-9]/s/^\(.\{8\}\).\{22\}\(.\{11\}\).\{22\}/\1        PID        TID\2        PID        TID/
