# WebSearch flow-size distribution.
# Measured by Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010 (a web-search cluster's
# query and background traffic), as the HPCC paper (Li et al., SIGCOMM 2019, section 5) ran it.
# Source file: github.com/alibaba-edu/High-Precision-Congestion-Control,
#   traffic_gen/WebSearch_distribution.txt at commit 9f4be2a9ead8a90e8bf732c66bd758c00e58e5be,
#   copied unchanged below this header.
# Format: one point per line, "<flow size in bytes> <cumulative percent of flows>"; sizes between
# two points are linearly interpolated (the artifact's traffic_gen/custom_rand.py does the same).
# Mean flow size of the interpolated distribution: 1,711,250 bytes.
0 0
10000 15
20000 20
30000 30
50000 40
80000 53
200000 60
1000000 70
2000000 80
5000000 90
10000000 97
30000000 100
