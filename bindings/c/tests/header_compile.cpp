/*
** header_compile.cpp -- the same checks as header_compile.c, compiled as C++
** with -Wall -Wextra -Werror -pedantic: include/ydbview.h must work there too.
** Compiled only, never run.
*/
#include "header_compile.c"
