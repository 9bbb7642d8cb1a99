// STUB: the CLI work replaces this.
process.stderr.write("krypton: not built yet\n");
process.exitCode = 1;
