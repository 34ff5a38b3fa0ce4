# FB_Hadoop flow-size distribution.
# Measured by Roy et al., "Inside the Social Network's (Datacenter) Network", SIGCOMM 2015 (a
# Facebook Hadoop cluster), as the HPCC paper (Li et al., SIGCOMM 2019, section 5) ran it.
# Source file: github.com/alibaba-edu/High-Precision-Congestion-Control,
#   traffic_gen/FbHdp_distribution.txt at commit 9f4be2a9ead8a90e8bf732c66bd758c00e58e5be,
#   copied unchanged below this header.
# Format: one point per line, "<flow size in bytes> <cumulative percent of flows>"; sizes between
# two points are linearly interpolated (the artifact's traffic_gen/custom_rand.py does the same).
# Mean flow size of the interpolated distribution: 120,420.75 bytes.
0 0
100 1
200 2
300 5
350 15
400 20
500 30
600 40
700 50
1000 60
2000 67
7000 70
30000 72
50000 82
80000 87
120000 90
300000 95
1000000 97.5
2000000 99
10000000 100
