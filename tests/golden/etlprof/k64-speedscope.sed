# The exporter names libetl's version, which depends on the build: it becomes N.
s|"libetl [0-9][0-9.]*"|"libetl N"|
