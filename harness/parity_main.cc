// The `parity` command line.
#include <iostream>
int main(int argc, char** argv) { std::cerr << "parity: not ready\n"; return 2; }
