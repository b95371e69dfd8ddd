package main

import _ "embed"

// The commands' help texts, each printed before its flags (printHelp).
var (
	//go:embed usage/llmrun.txt
	usage string
	//go:embed usage/help.txt
	helpUsage string
	//go:embed usage/version.txt
	versionUsage string
	//go:embed usage/run.txt
	runUsage string // %s: the stock scenarios
	//go:embed usage/inspect.txt
	inspectUsage string
	//go:embed usage/bench.txt
	benchUsage string
	//go:embed usage/sim.txt
	simUsage string
	//go:embed usage/trend.txt
	trendUsage string
	//go:embed usage/compare.txt
	compareUsage string
	//go:embed usage/merge.txt
	mergeUsage string
	//go:embed usage/kube.txt
	kubeUsage string
	//go:embed usage/report.txt
	reportUsage string
	//go:embed usage/new.txt
	newUsage string // %s: the templates
	//go:embed usage/types.txt
	typesUsage string
	//go:embed usage/dashboard.txt
	dashboardUsage string
)
