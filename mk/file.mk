# WellBehaved.File (issue 5): the pure-C line reader and write buffer
# (c_src/file/), linked into the NIF library, and its sanitized unit test.

FILE_CORE_SRC := c_src/file/line_reader.c
FILE_CORE_HDR := c_src/file/line_reader.h
FILE_TEST := c_src/build/test_line_reader

C_TEST_TARGETS += $(FILE_TEST)

# the NIF library (built by the main Makefile) links the core too
NIF_SRC += $(FILE_CORE_SRC)
NIF_HDR += $(FILE_CORE_HDR)

$(FILE_TEST): c_src/file/test_line_reader.c c_src/test/check.h $(FILE_CORE_SRC) $(FILE_CORE_HDR)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -o $@ c_src/file/test_line_reader.c $(FILE_CORE_SRC)
