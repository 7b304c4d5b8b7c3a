#include <check.h>
Suite *suite_gate(void)
{
    Suite *s = suite_create("gate");
    return s;
}
