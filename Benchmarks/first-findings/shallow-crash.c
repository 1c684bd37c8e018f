// Sleeps 10 ms (a Swift loader's start-up) and aborts on any same-length change behind its magic.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    usleep(10000);
    FILE *f = fopen(argv[1], "rb");
    if (!f) { fprintf(stderr, "reason: not-found\n"); return 1; }
    static unsigned char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (n == 0) { fprintf(stderr, "reason: empty\n"); return 1; }
    if (n != 4096 || memcmp(buf, "HABT", 4) != 0) { fprintf(stderr, "reason: corrupt\n"); return 1; }
    for (size_t i = 4; i < n; i++) if (buf[i] != (unsigned char)((i * 7 + buf[4]) & 0xFF) && i > 4) abort();
    printf("ok\n");
    return 0;
}
