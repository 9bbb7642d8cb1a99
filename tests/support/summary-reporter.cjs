// Prints one plain closing line ("jest: N passed, N failed") for CI, as the very last line of the run.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const line = `jest: ${results.numPassedTests} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : "");
    // Jest writes its own summary to stderr after the reporters run; print at exit so this line comes last.
    process.once("exit", () => process.stderr.write(`\n${line}\n`));
  }
}
module.exports = SummaryReporter;
