# Doxygen input filter for include/ydbview.h (docs/api/Doxyfile's INPUT_FILTER).
# The header is written as a manual in plain C comments: "/*" blocks with
# "**" margins before each declaration, and "/* ... */" after a #define or a
# struct member. Doxygen reads only "/**" and "/**<" comments, so this turns
# the header's own comments into those, word for word; the file is not
# changed, only what Doxygen reads.

# "--" is the header's dash and "--cflags" an option: kept as two hyphens,
# where Markdown would print one long dash. Likewise, a "*" before a name in the prose ("*out_db", "**out_list") is C's
# pointer star, not Markdown emphasis: escaped, outside the indented
# examples (a margin followed by four spaces or more).
/^(\*\*( {0,3}[^ ]|$)|\/\*)/{
  s#([ (\[])\*\*([A-Za-z_])#\1\\*\\*\2#g
  s#([ (\[])\*([A-Za-z_(])#\1\\*\2#g
  s#([^-])--([^-]|$)#\1\\--\2#g
}

# The opening block is the manual's introduction: the file's own page.
1s|^/\*$|/** @file|

# A block before a declaration (not a "/* ====" chapter banner).
/^\/\* =/!s#^/\*([^*]|$)#/**\1#

# A comment after a #define's value or a struct member: documents that line.
s#^(\#define .*[^ \\]|    +[^ *].*;)( +)/\*([^*<])#\1\2/**<\3#

# The "**" margin of a block's inner lines.
s#^\*\*( |$)# *\1#
