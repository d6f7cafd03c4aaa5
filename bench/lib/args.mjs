/** The bench scripts' command line: `--name value` options and the positional arguments. */
export function benchArgs(argv = process.argv.slice(2)) {
  return {
    argv,
    opt(name, dflt) {
      const i = argv.indexOf(`--${name}`);
      return i < 0 ? dflt : argv[i + 1];
    },
    positional: argv.filter((a, i) => !a.startsWith('--') && !argv[i - 1]?.startsWith('--')),
  };
}
