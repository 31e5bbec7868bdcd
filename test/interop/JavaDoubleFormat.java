// The oracle of utils/java_double_format: prints the JVM's Double.toString and Float.toString for chosen bit patterns.
// Run with Java 17 (JDK 19 and later print other digits): `java test/interop/JavaDoubleFormat.java MODE ...`
//   random SEED COUNT  COUNT doubles then COUNT floats drawn from SEED (splitmix64), mixing raw bit patterns,
//                      values near 1, short decimals, integers and subnormals/extremes
//   vectors            edge cases (zeros, NaNs, infinities, every power of two, powers of ten, their neighbours,
//                      the plain/E-form boundaries, large integers) and random values whose text is not the shortest
//                      that round-trips or ends in a zero digit: test/resource/java_double_format/vectors.txt
// Each output line is "d <16 hex digits> <text>" or "f <8 hex digits> <text>" (the raw IEEE bits).
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.Set;

public class JavaDoubleFormat {
    private long state;

    JavaDoubleFormat(long seed) {
        state = seed;
    }

    long next() {
        long z = (state += 0x9E3779B97F4A7C15L);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    int below(int n) {
        return (int) Long.remainderUnsigned(next(), n);
    }

    long randomDoubleBits(long i) {
        switch ((int) (i % 5)) {
        case 0:
            return next();
        case 1: { // exponent within 2^±80: plain and E forms near 1
            long exp = 1023 - 80 + below(161);
            return (next() & 0x800FFFFFFFFFFFFFL) | (exp << 52);
        }
        case 2: { // a short decimal, as a user would type it
            long m = Long.remainderUnsigned(next(), (long) Math.pow(10, 1 + below(17)));
            int e = below(61) - 30;
            return Double.doubleToRawLongBits(Double.parseDouble(m + "E" + e));
        }
        case 3: // an integer of up to 63 bits
            return Double.doubleToRawLongBits((double) (next() >>> below(64)));
        default: { // subnormals and the largest binades
            long exp = below(2) == 0 ? below(3) : 2044 + below(3);
            return (next() & 0x800FFFFFFFFFFFFFL) | (exp << 52);
        }
        }
    }

    int randomFloatBits(long i) {
        switch ((int) (i % 5)) {
        case 0:
            return (int) (next() >>> 32);
        case 1: {
            int exp = 127 - 40 + below(81);
            return ((int) next() & 0x807FFFFF) | (exp << 23);
        }
        case 2: {
            long m = Long.remainderUnsigned(next(), (long) Math.pow(10, 1 + below(9)));
            int e = below(31) - 15;
            return Float.floatToRawIntBits(Float.parseFloat(m + "E" + e));
        }
        case 3:
            return Float.floatToRawIntBits((float) (next() >>> below(64)));
        default: {
            int exp = below(2) == 0 ? below(3) : 252 + below(3);
            return ((int) next() & 0x807FFFFF) | (exp << 23);
        }
        }
    }

    static String line(double d) {
        return String.format("d %016x %s", Double.doubleToRawLongBits(d), Double.toString(d));
    }

    static String lineBits(long bits) {
        return String.format("d %016x %s", bits, Double.toString(Double.longBitsToDouble(bits)));
    }

    static String line(float f) {
        return String.format("f %08x %s", Float.floatToRawIntBits(f), Float.toString(f));
    }

    static String lineBits(int bits) {
        return String.format("f %08x %s", bits, Float.toString(Float.intBitsToFloat(bits)));
    }

    // A text is tricky when fewer significant digits also read back as the same value, or when its digits end in a
    // zero (2.0E-3 style "0.0020", or "1.00E5" after a carry).
    static boolean tricky(String s, boolean isFloat, long bits) {
        String mantissa = s.split("E")[0];
        int point = mantissa.indexOf('.');
        if (mantissa.length() - point > 2 && mantissa.endsWith("0")) {
            return true;
        }
        BigDecimal bd = new BigDecimal(s).stripTrailingZeros();
        int p = bd.precision();
        if (p <= 1) {
            return false;
        }
        for (RoundingMode rm : new RoundingMode[] {RoundingMode.DOWN, RoundingMode.UP, RoundingMode.HALF_EVEN}) {
            String shorter = bd.round(new MathContext(p - 1, rm)).toString();
            if (isFloat ? Float.floatToRawIntBits(Float.parseFloat(shorter)) == (int) bits
                        : Double.doubleToRawLongBits(Double.parseDouble(shorter)) == bits) {
                return true;
            }
        }
        return false;
    }

    static void vectors(BufferedWriter out) throws IOException {
        Set<String> lines = new LinkedHashSet<>();
        // Doubles: specials, every power of two, powers of ten and their neighbours, the format boundaries.
        for (long bits : new long[] {0L, 0x8000000000000000L, 0x7FF0000000000000L, 0xFFF0000000000000L,
                                     0x7FF8000000000000L, 0x7FF0000000000001L, 0xFFF8000000000001L,
                                     0x7FFFFFFFFFFFFFFFL, 1L, 2L, 3L, 0x000FFFFFFFFFFFFFL, 0x0010000000000000L,
                                     0x7FEFFFFFFFFFFFFFL, 0x8000000000000001L}) {
            lines.add(lineBits(bits));
        }
        for (int e = -1074; e <= 1023; ++e) {
            double p = Math.scalb(1.0, e);
            lines.add(line(p));
            if (e % 8 == 0 || e < -1010 || e > 1015 || (e > -30 && e < 70)) {
                lines.add(line(Math.nextUp(p)));
                if (e > -1074) {
                    lines.add(line(Math.nextDown(p)));
                }
            }
        }
        for (int e = -324; e <= 308; ++e) {
            double p = Double.parseDouble("1E" + e);
            lines.add(line(p));
            lines.add(line(Math.nextUp(p)));
            lines.add(line(Math.nextDown(p)));
            lines.add(line(-Double.parseDouble("5E" + e)));
        }
        for (double b : new double[] {1e-3, 1e7, 1e-4, 1e8, 0.1, 0.2, 0.3, 2e-3, 1e23, 9007199254740992.0,
                                      9007199254740993.0, 9.223372036854775807E18, 4.35e-5}) {
            for (double d = b, k = 0; k < 3; ++k, d = Math.nextUp(d)) {
                lines.add(line(d));
            }
            for (double d = b, k = 0; k < 3; ++k, d = Math.nextDown(d)) {
                lines.add(line(d));
            }
        }
        // Floats: specials, every power of two and its neighbours, powers of ten.
        for (int bits : new int[] {0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 1, 2, 3,
                                   0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x80000001}) {
            lines.add(lineBits(bits));
        }
        for (int e = -149; e <= 127; ++e) {
            float p = Math.scalb(1.0f, e);
            lines.add(line(p));
            lines.add(line(Math.nextUp(p)));
            if (e > -149) {
                lines.add(line(Math.nextDown(p)));
            }
        }
        for (int e = -45; e <= 38; ++e) {
            float p = Float.parseFloat("1E" + e);
            lines.add(line(p));
            lines.add(line(Math.nextUp(p)));
            lines.add(line(Math.nextDown(p)));
        }
        for (float b : new float[] {1e-3f, 1e7f, 7.8304013E8f, 5.62598385E17f, 16777216f, 16777217f, 1e10f}) {
            for (float d = b, k = 0; k < 3; ++k, d = Math.nextUp(d)) {
                lines.add(line(d));
            }
            for (float d = b, k = 0; k < 3; ++k, d = Math.nextDown(d)) {
                lines.add(line(d));
            }
        }
        // Random values whose text is tricky, from a fixed seed.
        JavaDoubleFormat g = new JavaDoubleFormat(20261122L);
        int doubles = 0;
        for (long i = 0; doubles < 2000; ++i) {
            long bits = g.randomDoubleBits(i);
            double d = Double.longBitsToDouble(bits);
            if (!Double.isNaN(d) && !Double.isInfinite(d) && tricky(Double.toString(d), false, bits)
                    && lines.add(lineBits(bits))) {
                ++doubles;
            }
        }
        int floats = 0;
        for (long i = 0; floats < 1500; ++i) {
            int bits = g.randomFloatBits(i);
            float f = Float.intBitsToFloat(bits);
            if (!Float.isNaN(f) && !Float.isInfinite(f) && tricky(Float.toString(f), true, bits)
                    && lines.add(lineBits(bits))) {
                ++floats;
            }
        }
        for (String l : lines) {
            out.write(l);
            out.write('\n');
        }
    }

    static String hex(long v, int width) {
        String h = Long.toHexString(v);
        return "0".repeat(width - h.length()) + h;
    }

    public static void main(String[] args) throws IOException {
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.US_ASCII), 1 << 16);
        if (args.length == 3 && args[0].equals("random")) {
            JavaDoubleFormat g = new JavaDoubleFormat(Long.parseLong(args[1]));
            long count = Long.parseLong(args[2]);
            for (long i = 0; i < count; ++i) {
                long bits = g.randomDoubleBits(i);
                out.write("d ");
                out.write(hex(bits, 16));
                out.write(' ');
                out.write(Double.toString(Double.longBitsToDouble(bits)));
                out.write('\n');
            }
            for (long i = 0; i < count; ++i) {
                int bits = g.randomFloatBits(i);
                out.write("f ");
                out.write(hex(bits & 0xFFFFFFFFL, 8));
                out.write(' ');
                out.write(Float.toString(Float.intBitsToFloat(bits)));
                out.write('\n');
            }
        } else if (args.length == 1 && args[0].equals("vectors")) {
            out.write("# java test/interop/JavaDoubleFormat.java vectors, on Java " + System.getProperty("java.version") + "\n");
            vectors(out);
        } else {
            System.err.println("usage: java JavaDoubleFormat.java random SEED COUNT | vectors");
            System.exit(2);
        }
        out.flush();
    }
}
