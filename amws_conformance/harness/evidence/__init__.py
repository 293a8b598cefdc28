"""What a run leaves behind: report.json and report.html, verdicts, bundles and their verification,
diffs, expectations, stability reruns, curl commands, header explanations and replays.
"""
