# The version numbers (of the tool, libetl, zlib, SQLite) depend on the build and the machine:
# each becomes N, and the line's shape is compared.
s|\([ /]\)[0-9][0-9]*\(\.[0-9][0-9]*\)*|\1N|g
