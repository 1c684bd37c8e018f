// The trivial loader of the execution-speed benchmark: reads the file, checks a magic,
// sums the bytes. Its own cost is negligible, so the benchmark measures the fuzzer.
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    FILE *f = fopen(argv[1], "rb");
    if (!f) { fputs("reason: not-found\n", stderr); return 1; }
    unsigned char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (n == 0) { fputs("reason: empty\n", stderr); return 1; }
    if (n < 4 || memcmp(buf, "HBTS", 4) != 0) { fputs("reason: corrupt\n", stderr); return 1; }
    unsigned sum = 0;
    for (size_t i = 0; i < n; i++) sum += buf[i];
    printf("%u\n", sum);
    return 0;
}
