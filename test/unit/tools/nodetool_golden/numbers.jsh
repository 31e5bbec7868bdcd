// JDK String.format("%.Nf"), FileUtils.stringifyFileSize and DecimalFormat("##0.0%") of nodetool_test.cc java_number_formats values.
double[] vs = {0.25, 0.0355, 1.25, 0.125, 1.005, 2.675, 0.0005, 123456.789, 1e-7, 9.9995, 99.995, 0.4213, -0.5, -1.25, 1e20, 0.1+0.2, 1.0/3, 2.0/3, 5e-5, 0.00105};
int[] ps = {0, 1, 2, 3, 5};
for (double v : vs) { StringBuilder sb = new StringBuilder(); sb.append(v); for (int p : ps) sb.append("|").append(String.format("%." + p + "f", v)); System.out.println(sb); }
double[] fs = {0, 1, 1023, 1024, 1025, 1536.125, 1048575, 1048576, 1500000, 1.5e9, 2.5e12, 1126.4, 1131.52, 10485.76};
for (double f : fs) System.out.println("FS " + f + "|" + org.apache.cassandra.io.util.FileUtils.stringifyFileSize(f));
float[] owns = {1.0f, 0.333333f, 0.5f, 0.0005f, 0.12345f, 0.66666667f};
for (float o : owns) System.out.println("OW " + o + "|" + new java.text.DecimalFormat("##0.0%").format(o));
/exit
