# Text for the fuzzy scorers (issue 48): the folding processor's native
# table (c_src/text/fold.c, fold_table.h made by scripts/fold_table.exs)
# and the check that text needs no grapheme clusters (graphemes.c),
# linked into the NIF library, and their sanitized unit test.

TEXT_SRC := c_src/text/fold.c c_src/text/graphemes.c
TEXT_HDR := c_src/text/fold.h c_src/text/fold_table.h c_src/text/graphemes.h c_src/text/utf8.h
TEXT_TEST := c_src/build/test_text

C_TEST_TARGETS += $(TEXT_TEST)

NIF_SRC += $(TEXT_SRC)
NIF_HDR += $(TEXT_HDR)

SAN_TEXT := $(call objs,san,c_src/text/utf8.c $(TEXT_SRC))
$(TEXT_TEST): c_src/test/test_text.c c_src/test/check.h $(TEXT_HDR) $(SAN_TEXT)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -o $@ c_src/test/test_text.c $(SAN_TEXT)

# the fuzz target (FUZZ_NAMES, Makefile): the walks in steps against a
# plain walk
c_src/build/fuzz_text: c_src/fuzz/fuzz_text.c c_src/fuzz/fuzz.h $(TEXT_HDR) $(call objs,fuzz,c_src/text/utf8.c $(TEXT_SRC)) | fuzz-deps
	@mkdir -p c_src/build
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ c_src/fuzz/fuzz_text.c $(call objs,fuzz,c_src/text/utf8.c $(TEXT_SRC))
