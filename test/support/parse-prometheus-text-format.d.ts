/** The package ships no types: its output as its README documents it (prom2json's shape). */
declare module 'parse-prometheus-text-format' {
  interface PrometheusSample {
    labels?: Record<string, string>;
    value?: string;
    /** Histograms: counts per upper bound (`le`), and their count and sum. */
    buckets?: Record<string, string>;
    /** Summaries: values per quantile. */
    quantiles?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  interface PrometheusFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: PrometheusSample[];
  }
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
