'use strict';
// Helpers shared by the Node client programs (kafkajs, kcat).

function check(ok, message) {
  if (!ok) throw new Error(message);
}

/** Runs f until it succeeds or `ms` pass (metadata propagation). */
async function retry(f, ms = 10000) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await f();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Parses BOOTSTRAP SCENARIO, runs run(bootstrap, scenarioFn) and exits 0 / 1 (failure) / 2 (usage). */
function main(scenarios, run) {
  const [bootstrap, name] = process.argv.slice(2);
  if (!bootstrap || !name) {
    console.error(`usage: node ${process.argv[1]} BOOTSTRAP SCENARIO`);
    process.exit(2);
  }
  if (!scenarios[name]) {
    console.error(`unknown scenario ${name}`);
    process.exit(2);
  }
  run(bootstrap, scenarios[name]).then(
    (summary) => {
      if (typeof summary === 'string') console.log(summary); // what a passing scenario saw (--verbose shows it)
      process.exit(0);
    },
    (e) => {
      console.error(`FAIL: ${describe(e)}`);
      if (process.env.COMPAT_VERBOSE && e && e.stack) console.error(e.stack);
      process.exit(1);
    },
  );
}

/** "Name: message" of an error and of its causes (kafkajs wraps errors in retriable/connection errors). */
function describe(e) {
  const parts = [];
  for (let x = e, depth = 0; x && depth < 5; x = x.cause || x.originalError, depth++) {
    parts.push(x instanceof Error ? `${x.name}: ${x.message}` : String(x));
  }
  return parts.join(' <- caused by ');
}

module.exports = { check, retry, main, describe };
