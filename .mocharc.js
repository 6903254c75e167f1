// Every test by default; only the files named when some are given (`npx mocha dist/test/x.test.js`),
// since mocha adds a config's spec to the files on the command line.
const named = process.argv.slice(2).some((a) => a.endsWith('.js') && !a.startsWith('-'));
module.exports = {
  spec: named ? [] : ['dist/test/**/*.test.js'],
  timeout: 20000,
  reporter: 'dot',
  // A test that leaves a client or timer behind must not hold the run (and CI) open once it has reported.
  exit: true,
};
