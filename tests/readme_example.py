#!/usr/bin/python3
"""readme_example.py README OUT.c: the C example of README's "The C API in
brief" as a program that checks what the example says it gets. Its line
`/* r.count == Z, r.shape == {A, B}, r.indices == {...} */` becomes checks
(exit 1 and the values on a mismatch), so the example cannot drift from the
header unnoticed: test_install.sh builds it -Werror against the installed
library and runs it."""
import re
import sys

text = open(sys.argv[1], encoding="utf-8").read()
section = text.split("## The C API in brief", 1)[1]
code = re.search(r"```c\n(.*?)```", section, re.S).group(1)
want = re.search(r"/\* r\.count == (\d+), r\.shape == \{(\d+), (\d+)\}, "
                 r"r\.indices == \{([\d, ]*)\} \*/", code)
if not want:
    sys.exit("readme_example: the example's /* r.count == ... */ line is gone")
count, rows, cols = (int(want.group(i)) for i in (1, 2, 3))
idx = [int(v) for v in want.group(4).replace(" ", "").split(",") if v]
check = f"""{{
    const int64_t want[] = {{{", ".join(map(str, idx))}}};
    int bad = r.count != {count} || r.ndim != 2 || r.shape[0] != {rows} || r.shape[1] != {cols};
    for (int i = 0; !bad && i < {len(idx)}; ++i)
        bad = ((const int64_t *)r.indices)[i] != want[i];
    if (bad) {{
        printf("count %lld shape %lld %lld\\n", (long long)r.count, (long long)r.shape[0],
               (long long)r.shape[1]);
        return 1;
    }}
}}"""
body = code.replace(want.group(0), check)
body = body.replace("#include <clnz.h>\n", "")
with open(sys.argv[2], "w") as f:
    f.write("#include <clnz.h>\n#include <stdio.h>\n\nint main(void)\n{\n" + body +
            "    printf(\"ok\\n\");\n    return 0;\n}\n")
