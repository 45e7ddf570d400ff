// parity-worker: placeholder until the worker host lands.
int main() { return 2; }
